mod bad_input;
mod cli;
mod generation;
mod llm;
mod local_model;
mod sandbox;
mod schemas;
mod support;
