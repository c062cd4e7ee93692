//! `sleuth completions SHELL`: a completion script for bash, zsh, fish, elvish or
//! PowerShell on standard output.

#[derive(clap::Args)]
pub struct Args {
    /// bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

pub fn run(args: Args, cmd: &mut clap::Command) -> anyhow::Result<()> {
    clap_complete::generate(args.shell, cmd, "sleuth", &mut std::io::stdout());
    Ok(())
}
