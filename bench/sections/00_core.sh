# Section 00: the harness itself.  Anchor: a plain catalog read.
bench_db storagelab_bench_core
anchor=$(bench_ms 'SELECT * FROM pg_catalog.pg_settings' 20)
subject=$(bench_ms 'SELECT * FROM storagelab.setting_values' 20)
bench_row "setting_values" "$subject" "SELECT * FROM pg_settings" "$anchor"
