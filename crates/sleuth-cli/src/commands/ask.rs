//! `sleuth ask`

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`sleuth ask` is not implemented yet")
}
