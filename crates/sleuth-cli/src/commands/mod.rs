//! One module per subcommand: its arguments, and how they resolve into real objects
//! and run.

pub mod ask;
pub mod cache;
pub mod completions;
pub mod data;
pub mod demo;
pub mod eval;
pub mod experiment;
pub mod export;
pub mod fetch;
pub mod index;
pub mod methods;
pub mod model;
pub mod report;
pub mod score;
