import { Table, TableIndex, type TableColumnOptions } from 'typeorm';

/**
 * Portable column shorthands for migrations: the QueryRunner's Table API renders them for SQLite and
 * PostgreSQL alike, so one migration serves both databases.
 */
export const col = {
  id: (name = 'id'): TableColumnOptions => ({ name, type: 'varchar', length: '64', isPrimary: true }),
  ref: (name: string, nullable = false): TableColumnOptions => ({
    name,
    type: 'varchar',
    length: '64',
    isNullable: nullable,
  }),
  time: (name: string, nullable = false): TableColumnOptions => ({
    name,
    type: 'varchar',
    length: '24',
    isNullable: nullable,
  }),
  text: (name: string, opts: Partial<TableColumnOptions> = {}): TableColumnOptions => ({ name, type: 'text', ...opts }),
  int: (name: string, opts: Partial<TableColumnOptions> = {}): TableColumnOptions => ({
    name,
    type: 'integer',
    ...opts,
  }),
  bigint: (name: string, opts: Partial<TableColumnOptions> = {}): TableColumnOptions => ({
    name,
    type: 'bigint',
    ...opts,
  }),
  bool: (name: string, opts: Partial<TableColumnOptions> = {}): TableColumnOptions => ({
    name,
    type: 'boolean',
    ...opts,
  }),
};

export function table(
  name: string,
  columns: TableColumnOptions[],
  indices: { columns: string[]; unique?: boolean }[] = [],
): Table {
  return new Table({
    name,
    columns,
    indices: indices.map(
      (i) =>
        new TableIndex({
          name: `IDX_${name}_${i.columns.join('_')}`,
          columnNames: i.columns,
          isUnique: i.unique ?? false,
        }),
    ),
  });
}
