mod bad_input;
mod generation;
mod schemas;
mod support;
