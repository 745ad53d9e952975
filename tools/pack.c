int td_verb_pack(int argc, char **argv) { return 2; }
