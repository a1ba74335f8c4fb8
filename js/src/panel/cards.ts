/**
 * The transcript's cards: a tool call, the plan, a question, an approval. Each builder
 * makes the DOM and returns the parts the transcript updates in place later; what a click
 * does is the caller's (the transcript sends the command). One file per card kind; this
 * one gathers them.
 */
export * from './approval-card';
export * from './cell-links';
export * from './labels';
export * from './plan-card';
export * from './question-card';
export * from './tool-card';
