//! topicmap: find the topics in a collection of paper abstracts.
//!
//! The stages, one module each, in the order [`pipeline`] runs them:
//!
//! ```text
//! ingest -> clean -> tokenize -> vectorize -> reduce -> cluster -> describe -> evaluate
//!        -> export (CSV, JSON) / chart (PNG, SVG) / report (HTML)
//! ```
//!
//! Each stage owns its parameters; [`config`] turns a pipeline file into [`config::Settings`],
//! which holds every stage's checked parameters. [`pipeline`] wires the stages, [`present`]
//! turns the analysis into the report's files, [`output`] makes report folders appear whole, and
//! [`cli`] is the command line.

pub mod chart;
pub mod clean;
pub mod cli;
pub mod cluster;
pub mod config;
pub mod describe;
pub mod evaluate;
pub mod export;
pub mod ingest;
pub mod model;
pub mod output;
pub mod pipeline;
pub mod present;
pub mod progress;
pub mod reduce;
pub mod report;
pub mod tokenize;
pub mod vectorize;
