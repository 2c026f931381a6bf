//! topicmap: find the topics in a collection of paper abstracts.
//!
//! The stages, one module each, in the order [`pipeline`] runs them:
//!
//! ```text
//! ingest -> clean -> tokenize -> vectorize -> reduce (-> embed) -> cluster -> describe -> layout -> evaluate
//!        -> render: tables (CSV, Parquet, JSON) / workbook (XLSX) / chart (PNG, SVG) / html (HTML, Markdown)
//! ```
//!
//! Each stage owns its parameters; [`config`] turns a pipeline file into [`config::Settings`],
//! which holds every stage's checked parameters. [`pipeline`] wires the stages, [`render`]
//! turns the analysis into the report folder's files through the four writers, [`staging`]
//! makes report folders appear whole, and [`cli`] is the command line.
//!
//! Three small modules serve several stages and writers alike, so that each decision they hold
//! is taken once: [`simd`] (the CPU's vector level, for every kernel), [`norm`] (unit-length
//! vectors) and [`sample`] (deterministic subsets and a map's view).

pub mod chart;
pub mod clean;
pub mod cli;
pub mod cluster;
pub mod config;
pub mod describe;
pub mod embed;
pub mod evaluate;
pub mod heap;
pub mod html;
pub mod ingest;
pub mod layout;
pub mod model;
pub mod norm;
pub mod pipeline;
pub mod progress;
pub mod reduce;
pub mod render;
pub mod sample;
pub mod simd;
pub mod staging;
pub mod tables;
pub mod tokenize;
pub mod vectorize;
pub mod workbook;
