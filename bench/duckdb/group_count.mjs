// SPDX-License-Identifier: BSD-3-Clause
// group_count.mjs: DuckDB's GROUP BY distinct counts of a tab-separated file
// of (group, item) rows, for bench/group_bench.sh: prints "group<TAB>count"
// per group, like `sketch count --by 1 -f 2`.
//
// Usage: node group_count.mjs approx|exact FILE
import { DuckDBInstance } from '@duckdb/node-api';

const [mode, file] = process.argv.slice(2);
if (!['approx', 'exact'].includes(mode) || !file) {
  console.error('usage: node group_count.mjs approx|exact FILE');
  process.exit(2);
}
const count = mode === 'approx' ? 'approx_count_distinct(item)' : 'count(DISTINCT item)';
const escaped = file.replaceAll("'", "''");
const sql = `SELECT grp, ${count} AS n FROM read_csv('${escaped}', delim = '\t', header = false,
             quote = '', escape = '', columns = {'grp': 'VARCHAR', 'item': 'VARCHAR'})
             GROUP BY grp`;
const instance = await DuckDBInstance.create(':memory:');
const connection = await instance.connect();
const reader = await connection.runAndReadAll(sql);
const out = [];
for (const [grp, n] of reader.getRows())
  out.push(`${grp}\t${n}\n`);
process.stdout.write(out.join(''));
