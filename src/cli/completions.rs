//! `schedlab completions SHELL`: the completion script of a shell, generated from the same
//! clap definitions as the parser (clap_complete), so it never lags behind the commands.

use clap::CommandFactory;

use super::{Cli, CliError};

#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  schedlab completions bash > ~/.local/share/bash-completion/completions/schedlab
  schedlab completions zsh > ~/.zfunc/_schedlab      (with fpath+=~/.zfunc in ~/.zshrc)
  schedlab completions fish > ~/.config/fish/completions/schedlab.fish

Exit codes: 0 printed; 2 an unknown shell.")]
pub struct Args {
    /// The shell to complete for.
    pub shell: clap_complete::Shell,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let mut command = Cli::command();
    clap_complete::generate(args.shell, &mut command, "schedlab", &mut std::io::stdout());
    Ok(())
}
