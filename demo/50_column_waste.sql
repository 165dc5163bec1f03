-- Bytes lost to column order and to oversized types.
\echo '-- SELECT relation, saved_pretty, saved_bytes_per_row, row_bytes, padding_bytes_per_row, evidence, suggested_order FROM storagelab.alignment_padding ORDER BY saved_bytes DESC NULLS LAST;'
SELECT relation, saved_pretty, saved_bytes_per_row, row_bytes, padding_bytes_per_row,
       evidence, suggested_order
  FROM storagelab.alignment_padding
 ORDER BY saved_bytes DESC NULLS LAST, relation::text;

\echo '-- SELECT relation, column_name, column_type, suggested_type, saved_pretty, advice, evidence FROM storagelab.column_waste;'
SELECT relation, column_name, column_type, suggested_type, saved_pretty, advice, evidence
  FROM storagelab.column_waste
 ORDER BY saved_bytes DESC NULLS LAST, relation::text, column_name;

\echo '-- SELECT * FROM storagelab.column_profile(''public.pgbench_accounts'');  -- one exact pass'
SELECT * FROM storagelab.column_profile('public.pgbench_accounts');

\echo '-- column_waste for pgbench_accounts after the exact pass'
SELECT relation, column_name, column_type, suggested_type, saved_pretty, advice, evidence
  FROM storagelab.column_waste
 WHERE relation = 'public.pgbench_accounts'::regclass
 ORDER BY column_name;
