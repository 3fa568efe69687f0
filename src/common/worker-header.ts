/**
 * The response header the simulated router adds to name the worker that served a request (a real SGLang
 * router does not say); the client fills a record's `host` from it where present.
 */
export const WORKER_HEADER = 'x-llm-perf-worker'
