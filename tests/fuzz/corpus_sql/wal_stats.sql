CHECKPOINT; SELECT wal_records > 0, wal_fpi, wal_bytes, stats_reset FROM pg_stat_wal; SELECT wal_records, fpi_bytes, insert_lsn FROM keel_stat_wal; SHOW shared_buffers
