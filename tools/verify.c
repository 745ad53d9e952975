int td_verb_verify(int argc, char **argv) { return 2; }
