//! The Gherkin runner and step definitions (being written).
