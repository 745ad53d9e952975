int td_verb_hash(int argc, char **argv) { return 2; }
