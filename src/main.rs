//! The `zerorepo` binary: all of the command line lives in the library's `cli` module (the
//! top layer), so the binary only hands over to it.

fn main() -> std::process::ExitCode {
    zerorepo::cli::main()
}
