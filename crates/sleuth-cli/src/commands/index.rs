//! `sleuth index ...`

use clap::Subcommand;

#[derive(Subcommand)]
pub enum IndexCommand {}

pub fn run(command: IndexCommand) -> anyhow::Result<()> {
    match command {}
}
