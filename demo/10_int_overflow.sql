-- storagelab.int_overflow: integer columns and sequences near their limits.
-- Three Pagila sequences are pushed toward 2^31-1 first (setval; they stay
-- there for the rest of the demo).
SELECT setval('actor_actor_id_seq', 2140000000) AS actor,
       setval('rental_rental_id_seq', 1700000000) AS rental,
       setval('payment_payment_id_seq', 1100000000) AS payment;

\echo '-- SELECT relation, column_name, used_pct, severity, current_value, values_left, source, referencing_columns'
\echo '--   FROM storagelab.int_overflow ORDER BY used_pct DESC NULLS LAST LIMIT 12;'
SELECT relation, column_name, used_pct, severity, current_value, values_left, source,
       referencing_columns
  FROM storagelab.int_overflow
 ORDER BY used_pct DESC NULLS LAST, relation::text, column_name
 LIMIT 12;

\echo '-- How each column was measured:'
\echo '-- SELECT source, evidence, status, count(*) FROM storagelab.int_overflow GROUP BY 1, 2, 3;'
SELECT source, evidence, status, count(*)
  FROM storagelab.int_overflow GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;

\echo '-- Exact values by scanning, on demand:'
\echo '-- SELECT * FROM storagelab.int_overflow_scan(''pgbench_accounts'');'
SELECT * FROM storagelab.int_overflow_scan('pgbench_accounts');

\echo '-- Record values for overflow_at (schedule this daily, e.g. with pg_cron):'
\echo '-- SELECT storagelab.int_overflow_snapshot();'
SELECT storagelab.int_overflow_snapshot() AS rows_recorded;
