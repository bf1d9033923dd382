mod bad_input;
mod cli;
mod generation;
mod sandbox;
mod schemas;
mod support;
