//! Pictures of what an HPA did: a [`timeline::Timeline`] built from the
//! controller's decision records, drawn as SVG by [`svg`]. `replay --plot`,
//! `explain --plot` and the HTML report of `test --report` use them.
//! [`load`] draws the load report's charts (`load --plot`).

pub mod bound;
pub mod load;
pub mod svg;
pub mod timeline;

pub use svg::{Layout, PlotError, render, write};
pub use timeline::{Sample, Timeline};

#[cfg(test)]
mod props;
