//! The one integration-test binary: drives the real `sleuth` executable on temp dirs,
//! real benchmark files from `../shared/data`, and real local HTTP servers.
//! One module per area of the tool.

mod agents;
mod batch;
mod beyond;
mod cluster;
mod conventions;
mod corpus;
mod data;
mod eir;
mod eir_cold_read;
mod eir_cold_read2;
mod eir_cold_read3;
mod eir_cold_read4;
mod eir_fidelity;
mod eir_paper;
mod eval;
mod fetch;
mod fetch_server;
mod fidelity_ledger;
mod first_hour;
mod golden;
mod hardening;
mod hardening2;
mod hardening3;
mod index;
mod local;
mod methods;
mod native_channel;
mod official;
mod paper_report;
mod prompt_cache;
mod providers;
mod report;
mod results;
mod score;
mod servers;
mod setup;
mod sleuth_cold_read;
mod sleuth_letter;
mod sleuth_paper;
mod sleuth_recheck;
mod sleuth_recheck2;
mod traffic;
mod twowiki;
mod util;
