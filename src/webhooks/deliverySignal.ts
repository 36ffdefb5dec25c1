import type { DataSource } from 'typeorm';

const listeners = new WeakMap<DataSource, Set<() => void>>();

/**
 * Listens for "deliveries were committed" in this process, for one data source (the worker wakes up
 * instead of waiting for its next poll). Process-local only: commits of other processes (another server,
 * `svc worker`) are found by polling. Returns the function that stops listening.
 */
export function onDeliveriesCommitted(ds: DataSource, listener: () => void): () => void {
  let set = listeners.get(ds);
  if (!set) listeners.set(ds, (set = new Set()));
  set.add(listener);
  return () => void set.delete(listener);
}

/** Tells this process's workers on `ds` that delivery rows have committed and are due. Call only after the commit. */
export function signalDeliveriesCommitted(ds: DataSource): void {
  for (const listener of listeners.get(ds) ?? []) listener();
}
