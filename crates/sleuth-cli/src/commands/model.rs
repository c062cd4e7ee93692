//! `sleuth model ...`

use clap::Subcommand;

#[derive(Subcommand)]
pub enum ModelCommand {}

pub fn run(command: ModelCommand) -> anyhow::Result<()> {
    match command {}
}
