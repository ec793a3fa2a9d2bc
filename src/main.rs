//! The `schedlab` command: parse arguments, run, map the outcome to an exit code.

fn main() -> std::process::ExitCode {
    schedlab::cli::main()
}
