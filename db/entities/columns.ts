import { Column, type ColumnOptions } from 'typeorm';

// TypeORM under tsx gets no decorator metadata, so every column names its type explicitly.
// Timestamps are stored as ISO 8601 UTC strings with milliseconds (fixed width, so they sort as text)
// to keep one representation on SQLite and PostgreSQL.

export const IdColumn = () => Column({ type: 'varchar', length: 64, primary: true });
export const RefColumn = (opts: ColumnOptions = {}) => Column({ type: 'varchar', length: 64, ...opts });
export const TimeColumn = (opts: ColumnOptions = {}) => Column({ type: 'varchar', length: 24, ...opts });
export const TextColumn = (opts: ColumnOptions = {}) => Column({ type: 'text', ...opts });
export const IntColumn = (opts: ColumnOptions = {}) => Column({ type: 'integer', ...opts });
export const BigIntColumn = (opts: ColumnOptions = {}) =>
  Column({
    type: 'bigint',
    transformer: { to: (v: number) => v, from: (v: string | number | null) => (v === null ? v : Number(v)) },
    ...opts,
  });
export const BoolColumn = (opts: ColumnOptions = {}) => Column({ type: 'boolean', ...opts });
/** JSON stored as text (portable across SQLite and PostgreSQL). */
export const JsonColumn = (opts: ColumnOptions = {}) =>
  Column({
    type: 'text',
    transformer: {
      to: (v: unknown) => (v === undefined ? v : JSON.stringify(v)),
      from: (v: string | null) => (v == null ? v : JSON.parse(v)),
    },
    ...opts,
  });
