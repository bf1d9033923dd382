mod bad_input;
mod generation;
mod sandbox;
mod schemas;
mod support;
