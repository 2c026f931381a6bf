//! `topicmap assign` takes its input columns, period and bad-document policy from the model's
//! pipeline ([`FitInput`], saved in `model.json`) unless a flag overrides each, so a weekly batch
//! is read as the fit read its corpus: `assign --model RUN files…` alone keeps the fit's ids and
//! periods. A table that lacks a column taken from the model is refused by ingest with the column
//! named, as for a flag; an explicit empty flag (`--id ""`, `--time ""`) goes without the column
//! (rows are then named `file:row`, or have no period). The log says what was taken.

use super::AssignOptions;
use crate::ingest::{InputFormat, InputSpec, OnBadDocument, PeriodUnit};
use crate::model::{FitInput, SavedModel};

/// `opts` with every column, the period and the policy the flags left open taken from `model`
/// (or the flags' defaults, for a model written before it kept them); what was taken is listed
/// in its `from_model` (for the log and `run.json`).
pub fn resolve(opts: &AssignOptions, model: &SavedModel) -> AssignOptions {
    let mut o = opts.clone();
    let fit = model.fit_input.clone().unwrap_or_default();
    let mut taken: Vec<String> = Vec::new();
    let specs = o
        .inputs
        .iter_mut()
        .chain(o.stdin.as_mut().map(|s| &mut s.spec));
    for spec in specs.filter(|s| !is_paper_list(s)) {
        fill_columns(spec, &fit, &mut taken);
    }
    if o.period.is_none() && model.fit_input.is_some() {
        taken.push(format!("period = {}", fit.period));
    }
    if o.on_bad.is_none() && model.fit_input.is_some() {
        taken.push(format!("on-bad-document = {}", fit.on_bad_document));
    }
    o.period = Some(o.period.unwrap_or(fit.period));
    o.on_bad = Some(o.on_bad.unwrap_or(fit.on_bad_document));
    taken.dedup();
    o.from_model = taken;
    o
}

/// Whether `spec` reads a paper list (no columns to take).
fn is_paper_list(spec: &InputSpec) -> bool {
    let format = spec
        .format
        .or_else(|| InputFormat::from_path(std::path::Path::new(&spec.pattern)));
    format == Some(InputFormat::PaperList)
}

/// Fills the columns `spec` leaves open from `fit`, noting each taken; an explicit empty
/// column means none.
fn fill_columns(spec: &mut InputSpec, fit: &FitInput, taken: &mut Vec<String>) {
    let mut one = |name: &str, flag: &mut Option<String>, model: &Option<String>| match (
        flag.as_deref(),
        model,
    ) {
        (None, Some(m)) => {
            taken.push(format!("{name} = {m}"));
            *flag = Some(m.clone());
        }
        (Some(""), _) => *flag = None,
        _ => {}
    };
    one("id", &mut spec.id, &fit.id);
    one("title", &mut spec.title, &fit.title);
    one("time", &mut spec.time, &fit.time);
    one("label", &mut spec.label, &fit.label);
    if let (None, Some(text)) = (&spec.text, &fit.text) {
        taken.push(format!("text = {}", text.join(",")));
        spec.text = Some(text.clone());
    }
}

impl AssignOptions {
    /// The log line saying what was taken from the model (none when nothing was).
    pub fn from_model_line(&self) -> Option<String> {
        (!self.from_model.is_empty()).then(|| {
            format!(
                "assign: from the model's pipeline (a flag overrides each): {}",
                self.from_model.join(", ")
            )
        })
    }

    /// The time bucket (resolved: see [`resolve`]).
    pub fn period(&self) -> PeriodUnit {
        self.period.unwrap_or_default()
    }

    /// The bad-document policy (resolved: see [`resolve`]).
    pub fn on_bad(&self) -> OnBadDocument {
        self.on_bad.unwrap_or_default()
    }
}
