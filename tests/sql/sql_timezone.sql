-- The TimeZone setting: timestamptz read and shown in the session's zone
-- (the system's zone database, POSIX TZ strings, fixed offsets), casts,
-- arithmetic, date_trunc, extract, to_char and AT TIME ZONE in it, with
-- the answers PostgreSQL 15 gives.
SHOW TimeZone;
CREATE TABLE tz_t (id int PRIMARY KEY, at timestamptz, wall timestamp);
INSERT INTO tz_t VALUES (1, '2024-07-01 12:00+00', '2024-07-01 12:00'),
    (2, '2024-01-15 08:30:15.5+00', '2024-01-15 08:30:15.5');
SET timezone = 'europe/paris';
SHOW timezone;
SELECT current_setting('TimeZone');
SELECT id, at, wall FROM tz_t ORDER BY id;
SELECT '2024-07-01 12:00'::timestamptz AS summer, '2024-01-01 12:00'::timestamptz AS winter;
INSERT INTO tz_t VALUES (3, '2024-07-01 12:00', '2024-07-01 12:00');
SELECT id, at, at::timestamp AS local, wall::timestamptz AS wall_here, at::date FROM tz_t ORDER BY id;
SELECT at FROM tz_t WHERE at = '2024-07-01 14:00';
COPY tz_t TO STDOUT;
-- changes of offset: a skipped time reads with the offset before, a
-- repeated one with the offset after
SELECT '2024-03-31 02:30'::timestamptz AS skipped, '2024-10-27 02:30'::timestamptz AS repeated;
SELECT '2024-03-31 01:59:59'::timestamptz, '2024-03-31 03:00'::timestamptz, '2024-10-27 01:59:59'::timestamptz, '2024-10-27 03:00'::timestamptz;
SELECT '2024-03-30 12:00'::timestamptz + interval '1 day' AS one_day,
       '2024-03-30 12:00'::timestamptz + interval '24 hours' AS hours_24,
       '2024-10-27 12:00'::timestamptz - interval '1 day' AS back_day,
       '2024-01-31 12:00'::timestamptz + interval '1 month 1 day 1 hour' AS mixed;
SELECT '2024-10-28 00:00'::timestamptz - '2024-10-27 00:00'::timestamptz AS across;
SELECT age('2024-07-01 00:00+00'::timestamptz, '2024-01-01 00:00+00'::timestamptz);
SELECT generate_series('2024-10-26 12:00'::timestamptz, '2024-10-28 12:00', '1 day');
SELECT generate_series('2024-03-31 00:00'::timestamptz, '2024-03-31 04:00', '1 hour');
-- fields and truncation in the zone's wall clock
SELECT date_trunc('day', '2024-07-01 23:30+00'::timestamptz) AS day,
       date_trunc('month', '2024-07-31 23:30+00'::timestamptz) AS month,
       date_trunc('hour', '2024-10-27 00:30+00'::timestamptz) AS hour,
       date_trunc('day', '2024-10-27'::date) AS from_date;
SELECT extract(hour FROM '2024-07-01 23:30+00'::timestamptz) AS hour,
       extract(day FROM '2024-07-01 23:30+00'::timestamptz) AS day,
       extract(timezone FROM '2024-07-01 23:30+00'::timestamptz) AS tz,
       extract(timezone_hour FROM '2024-01-01 00:00+00'::timestamptz) AS tzh,
       extract(epoch FROM '2024-07-01 00:00+02'::timestamptz) AS epoch,
       date_part('dow', '2024-07-06 23:30+00'::timestamptz) AS dow;
SELECT to_char('2024-07-01 12:00+00'::timestamptz, 'YYYY-MM-DD HH24:MI:SS TZ tz OF TZH:TZM') AS summer,
       to_char('2024-01-01 12:00+00'::timestamptz, 'DD Mon HH12:MI am TZ') AS winter,
       to_char('2024-01-01 12:00'::timestamp, 'HH24:MI TZ|OF') AS no_zone;
SELECT to_json('2024-07-01 12:00+00'::timestamptz), to_jsonb('2024-01-01 12:00+00'::timestamptz);
-- AT TIME ZONE and timezone()
SELECT '2024-07-01 12:00+00'::timestamptz AT TIME ZONE 'America/New_York' AS ny_wall,
       '2024-07-01 12:00'::timestamp AT TIME ZONE 'Asia/Kolkata' AS kolkata_noon,
       timezone('UTC', '2024-07-01 12:00+00'::timestamptz) AS utc_wall,
       '2024-07-01 12:00'::timestamp AT TIME ZONE 'utc' AS utc_noon;
SELECT wall AT TIME ZONE 'Australia/Sydney' AS sydney, at AT TIME ZONE 'Pacific/Chatham' AS chatham FROM tz_t ORDER BY id;
SELECT '2024-07-01 12:00 America/New_York'::timestamptz AS named_zone,
       '2024-07-01 12:00 Asia/Kathmandu'::timestamptz AS kathmandu,
       '2024-07-01 12:00 Europe/Paris'::timestamp AS ignored;
-- now and today in the zone
SELECT now() = current_timestamp, current_date = (now() AT TIME ZONE 'Europe/Paris')::date,
       localtimestamp = now() AT TIME ZONE 'Europe/Paris', 'today'::timestamptz = current_date::timestamptz;
-- history and the future: the file's first offsets, its rule after 2037
SELECT '1900-01-01 00:00'::timestamptz AS lmt, '1943-07-01 12:00+00'::timestamptz AS war,
       '2100-07-01 00:00'::timestamptz AS y2100, '2100-12-01 00:00'::timestamptz AS y2100w;
-- other zones
SET timezone = 'Asia/Kolkata';
SELECT at FROM tz_t ORDER BY id;
SET TIME ZONE 'America/St_Johns';
SELECT at, '1800-07-01 12:00+00'::timestamptz AS lmt FROM tz_t ORDER BY id;
SET TIME ZONE 'Australia/Sydney';
SELECT '2024-04-07 02:30'::timestamptz AS repeated, '2024-10-06 02:30'::timestamptz AS skipped;
SET TIME ZONE 'Australia/Lord_Howe';
SELECT '2024-01-01 12:00+00'::timestamptz, '2024-07-01 12:00+00'::timestamptz;
SET TIME ZONE 'Asia/Kathmandu';
SELECT '2024-01-01 12:00+00'::timestamptz;
-- POSIX TZ strings and fixed offsets
SET timezone = 'UTC+3';
SHOW timezone;
SELECT at FROM tz_t ORDER BY id;
SET timezone = '<+0330>-3:30';
SELECT '2024-07-01 12:00+00'::timestamptz;
SET timezone = 'CET-1CEST,M3.5.0,M10.5.0/3';
SELECT '2024-07-01 12:00+00'::timestamptz, '2024-12-01 12:00+00'::timestamptz, '2024-10-27 02:30'::timestamptz;
SET timezone = 'EST5EDT';
SELECT '2024-07-01 12:00+00'::timestamptz, '2024-12-01 12:00+00'::timestamptz;
SET TIME ZONE -7;
SHOW timezone;
SELECT '2024-07-01 12:00+00'::timestamptz;
SET TIME ZONE 5.5;
SHOW timezone;
SET TIME ZONE INTERVAL '-03:00' HOUR TO MINUTE;
SHOW timezone;
SELECT '2024-07-01 12:00+00'::timestamptz, to_char('2024-07-01 12:00+00'::timestamptz, 'TZ');
-- transactions undo a SET as any other
SET timezone = 'UTC';
BEGIN;
SET LOCAL timezone = 'Asia/Tokyo';
SELECT at FROM tz_t WHERE id = 1;
COMMIT;
SHOW timezone;
BEGIN;
SET timezone = 'America/Los_Angeles';
ROLLBACK;
SHOW timezone;
SELECT at FROM tz_t WHERE id = 1;
-- errors
SET timezone = 'Nowhere/Bogus';
SET timezone = '../../etc/passwd';
SET timezone = 'Europe';
SET timezone = '';
SELECT '2024-07-01 12:00+00'::timestamptz AT TIME ZONE 'Mars/Olympus';
SELECT '2024-07-01 12:00 Mars/Olympus'::timestamptz;
SHOW timezone;
RESET timezone;
SHOW timezone;
DROP TABLE tz_t;
