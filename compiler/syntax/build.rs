fn main() {
    lalrpop::process_src().expect("generating the .drs parser from grammar.lalrpop");
}
