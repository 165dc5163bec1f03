-- Bytes lost to column order and to oversized types.
\echo '-- SELECT relation, current_row_bytes, padding_bytes_per_row, saved_bytes_per_row, estimated_saved_pretty, suggested_order FROM storagelab.alignment_padding ORDER BY estimated_saved_bytes DESC NULLS LAST;'
SELECT relation, current_row_bytes, padding_bytes_per_row, saved_bytes_per_row,
       estimated_saved_pretty, suggested_order, confidence, status
  FROM storagelab.alignment_padding
 ORDER BY estimated_saved_bytes DESC NULLS LAST, relation::text;

\echo '-- SELECT relation, column_name, current_type_full, suggested_type, reason, saved_bytes_per_row, estimated_saved_pretty, confidence FROM storagelab.column_waste;'
SELECT relation, column_name, current_type_full, suggested_type, reason,
       saved_bytes_per_row, saved_bytes_per_row_reordered, estimated_saved_pretty, confidence
  FROM storagelab.column_waste
 ORDER BY estimated_saved_bytes DESC NULLS LAST, relation::text, column_name;

\echo '-- SELECT * FROM storagelab.column_profile(''public.pgbench_accounts'');  -- one exact pass'
SELECT * FROM storagelab.column_profile('public.pgbench_accounts');

\echo '-- column_waste for pgbench_accounts after the exact pass'
SELECT relation, column_name, current_type_full, suggested_type, reason,
       saved_bytes_per_row, estimated_saved_pretty, confidence
  FROM storagelab.column_waste
 WHERE relation = 'public.pgbench_accounts'::regclass
 ORDER BY column_name;
