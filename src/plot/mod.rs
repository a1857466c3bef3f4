//! Pictures of what an HPA did: a [`timeline::Timeline`] built from the
//! controller's decision records, drawn as SVG by [`svg`]. `replay --plot`,
//! `explain --plot` and the HTML report of `test --report` use them.

pub mod bound;
pub mod svg;
pub mod timeline;

pub use svg::{Layout, PlotError, render, write};
pub use timeline::{Sample, Timeline};

#[cfg(test)]
mod props;
