import type { DataSource } from 'typeorm';

const listeners = new WeakMap<DataSource, Set<() => void>>();

/** Listens for "agent runs were queued" in this process (the run worker wakes instead of waiting for its poll). */
export function onRunsQueued(ds: DataSource, listener: () => void): () => void {
  let set = listeners.get(ds);
  if (!set) listeners.set(ds, (set = new Set()));
  set.add(listener);
  return () => void set.delete(listener);
}

/** Wakes this process's run workers on `ds`. Call only after the commit. */
export function signalRunsQueued(ds: DataSource): void {
  for (const listener of listeners.get(ds) ?? []) listener();
}
