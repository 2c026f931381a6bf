//! What the fit read its corpus with: the input columns (text, id, title, time, label), the
//! period and the bad-document policy. Saved in `model.json`, so `topicmap assign` reads a weekly
//! batch as the fit read its corpus without each column repeated by hand; a flag still
//! overrides each (see `pipeline::assign_defaults`).

use crate::ingest::{InputSpec, OnBadDocument, PeriodUnit};
use serde::{Deserialize, Serialize};

/// The fit's input columns and policies.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FitInput {
    /// Table columns joined into the text (`None`: the default columns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub period: PeriodUnit,
    pub on_bad_document: OnBadDocument,
}

impl FitInput {
    /// The columns of the fit's first input that names any (the others of a pipeline read the
    /// same table shape, or are paper lists, which have no columns), its period and policy.
    pub fn of(inputs: &[InputSpec], period: PeriodUnit, on_bad: OnBadDocument) -> FitInput {
        let named = |i: &&InputSpec| {
            i.text.is_some()
                || i.id.is_some()
                || i.title.is_some()
                || i.time.is_some()
                || i.label.is_some()
        };
        let first = inputs.iter().find(named);
        FitInput {
            text: first.and_then(|i| i.text.clone()),
            id: first.and_then(|i| i.id.clone()),
            title: first.and_then(|i| i.title.clone()),
            time: first.and_then(|i| i.time.clone()),
            label: first.and_then(|i| i.label.clone()),
            period,
            on_bad_document: on_bad,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_input_naming_columns_is_kept() {
        let list = InputSpec::file("seeds.txt");
        let table = InputSpec {
            id: Some("arxiv_id".into()),
            time: Some("listing_date".into()),
            text: Some(vec!["title".into(), "abstract".into()]),
            ..InputSpec::file("a.csv")
        };
        let f = FitInput::of(&[list, table], PeriodUnit::Quarter, OnBadDocument::Fail);
        assert_eq!(f.id.as_deref(), Some("arxiv_id"));
        assert_eq!(f.time.as_deref(), Some("listing_date"));
        assert_eq!(
            f.text,
            Some(vec!["title".to_string(), "abstract".to_string()])
        );
        assert_eq!(f.label, None);
        assert_eq!(f.period, PeriodUnit::Quarter);
        let json = serde_json::to_string(&f).unwrap();
        assert_eq!(
            json,
            r#"{"text":["title","abstract"],"id":"arxiv_id","time":"listing_date","period":"quarter","on_bad_document":"fail"}"#
        );
        assert_eq!(serde_json::from_str::<FitInput>(&json).unwrap(), f);
    }
}
