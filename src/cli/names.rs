//! `topicmap names RUN_DIR [--out FILE]`: a names file for a run's topics, to edit by hand.

use super::NamesArgs;
use crate::describe::names::{template, TemplateTopic};
use crate::model::SavedModel;
use anyhow::{bail, Context};

pub fn names(args: NamesArgs) -> anyhow::Result<()> {
    let model = SavedModel::load(&args.run)
        .with_context(|| format!("reading the topics of {}", args.run.display()))?;
    let topics: Vec<TemplateTopic> = model
        .topics
        .iter()
        .map(|t| {
            let auto = t.auto_label.clone().unwrap_or_else(|| t.label.clone());
            TemplateTopic {
                id: t.id,
                name: (t.label != auto).then(|| t.label.clone()),
                auto_label: auto,
                size: t.size,
                named: t.named,
            }
        })
        .collect();
    let text = template(&model.name, &args.run.display().to_string(), &topics);
    match &args.out {
        None => super::print_line(format_args!("{}", text.trim_end()))?,
        Some(path) => {
            if path.exists() {
                bail!(
                    "{} exists: not replacing it (choose another --out)",
                    path.display()
                );
            }
            std::fs::write(path, &text).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    Ok(())
}
