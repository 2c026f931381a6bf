//! The workbook's two native Excel charts. They read the sheets' own cells (not copies of the
//! numbers), so they follow any edit: documents per topic beside Topics, and the share of each
//! period's documents below Trends.

use polars::prelude::DataFrame;
use rust_xlsxwriter::{Chart, ChartLegendPosition, ChartType, Worksheet, XlsxError};

/// A bar per topic (its label and document count, columns B and C of Topics), beside the
/// table; none without topics.
pub(super) fn topic_sizes(ws: &mut Worksheet, topics: &DataFrame) -> Result<(), XlsxError> {
    let n_topics = topics.height() as u32;
    if n_topics == 0 {
        return Ok(());
    }
    let mut chart = Chart::new(ChartType::Bar);
    chart
        .add_series()
        .set_name("documents")
        .set_categories(("Topics", 1, 1, n_topics, 1))
        .set_values(("Topics", 1, 2, n_topics, 2));
    chart.title().set_name("Documents per topic");
    chart.legend().set_hidden();
    chart.y_axis().set_reverse();
    chart.set_width(720).set_height(60 + 24 * n_topics.max(8));
    ws.insert_chart(1, topics.width() as u16 + 1, &chart)?;
    Ok(())
}

/// A line per topic of `chart_topics` (0 = the first topic column of `trends_wide`, after the
/// period and its document count), below the table; none with fewer than two periods.
pub(super) fn share_over_time(
    ws: &mut Worksheet,
    trends_wide: &DataFrame,
    chart_topics: &[usize],
) -> Result<(), XlsxError> {
    let n_periods = trends_wide.height() as u32;
    if n_periods < 2 || chart_topics.is_empty() {
        return Ok(());
    }
    let mut chart = Chart::new(ChartType::Line);
    for &topic in chart_topics {
        let col = 2 + topic as u16;
        chart
            .add_series()
            .set_name(("Trends", 0, col))
            .set_categories(("Trends", 1, 0, n_periods, 0))
            .set_values(("Trends", 1, col, n_periods, col));
    }
    chart.title().set_name("Share of each period's documents");
    chart.y_axis().set_num_format("0%");
    chart.legend().set_position(ChartLegendPosition::Bottom);
    chart.set_width(900).set_height(480);
    ws.insert_chart(n_periods + 2, 0, &chart)?;
    Ok(())
}
