//! Cleaning: what every document goes through before it is tokenized (see [`TextCleaner`]):
//! boilerplate, then links and injected markup, then the markup [`Cleaner`].

pub mod boilerplate;
pub mod injected;
pub mod links;
mod markup;
mod stage;

pub use boilerplate::{BackOff, BoilerplateParams, BoilerplateParamsError};
pub use markup::Cleaner;
pub use stage::{
    CleanBuffers, CleanParams, CleanReport, CleanTally, CleanValidParams, Cleaned, ShownSegment,
    TextCleaner,
};
