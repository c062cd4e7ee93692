//! `sleuth data ...`

use clap::Subcommand;

#[derive(Subcommand)]
pub enum DataCommand {}

pub fn run(command: DataCommand) -> anyhow::Result<()> {
    match command {}
}
