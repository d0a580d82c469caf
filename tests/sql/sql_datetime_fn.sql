-- extract(), date_part() and date_trunc().
SELECT extract(year FROM timestamp '2026-12-07 13:45:21.5'),
       extract(month FROM timestamp '2026-12-07 13:45:21.5'),
       extract(day FROM timestamp '2026-12-07 13:45:21.5'),
       extract(hour FROM timestamp '2026-12-07 13:45:21.5'),
       extract(minute FROM timestamp '2026-12-07 13:45:21.5'),
       extract(second FROM timestamp '2026-12-07 13:45:21.5');
SELECT extract(epoch FROM timestamptz '2026-12-07 13:45:21.5+00'),
       extract(epoch FROM date '2026-12-07'),
       extract(dow FROM date '2026-12-07'), extract(isodow FROM date '2026-12-06'),
       extract(doy FROM date '2026-12-07'), extract(quarter FROM date '2026-12-07'),
       extract(week FROM date '2026-01-01'), extract(isoyear FROM date '2026-01-01'),
       extract(week FROM date '2021-01-03'), extract(isoyear FROM date '2021-01-03');
SELECT extract(milliseconds FROM timestamp '2020-01-01 00:00:05.25'),
       extract(microseconds FROM timestamp '2020-01-01 00:00:05.25'),
       extract(century FROM date '2000-06-01'), extract(century FROM date '2001-01-01'),
       extract(decade FROM date '1999-12-31'), extract(millennium FROM date '2001-01-01');
SELECT date_part('year', timestamp '2026-12-07 13:45:21.5'),
       date_part('second', timestamp '2026-12-07 13:45:21.5'),
       date_part('epoch', timestamp '1970-01-02 00:00:00');
SELECT date_trunc('month', timestamp '2026-12-07 13:45:21.5'),
       date_trunc('hour', timestamp '2026-12-07 13:45:21.5'),
       date_trunc('minute', timestamptz '2026-12-07 13:45:21.5+00'),
       date_trunc('week', timestamp '2026-12-10 08:00'),
       date_trunc('quarter', timestamp '2026-11-30'),
       date_trunc('year', timestamp '2026-12-07'),
       date_trunc('second', timestamp '2026-12-07 13:45:21.5'),
       date_trunc('decade', timestamp '2026-12-07'),
       date_trunc('century', timestamp '2026-12-07'),
       date_trunc('millennium', timestamp '2026-12-07'),
       date_trunc('DAY', date '2026-12-07');
CREATE TABLE dt_t (id int PRIMARY KEY, at timestamp);
INSERT INTO dt_t VALUES (1, '2026-01-15 10:00'), (2, '2026-01-20 11:00'),
  (3, '2026-02-01 09:30'), (4, '2026-03-31 23:59');
SELECT date_trunc('month', at) AS month, count(*) FROM dt_t GROUP BY 1 ORDER BY 1;
SELECT id FROM dt_t WHERE extract(month FROM at) = 1 ORDER BY id;
SELECT extract(hour FROM date '2026-12-07');
SELECT extract(fortnight FROM timestamp '2026-12-07');
SELECT date_trunc('fortnight', timestamp '2026-12-07');
DROP TABLE dt_t;
-- to_date() and to_timestamp(text, template)
SELECT to_date('2024-03-05', 'YYYY-MM-DD'), to_date('05/03/2024', 'DD/MM/YYYY'), to_date('20240305', 'YYYYMMDD'), to_date('5 Mar 2024', 'DD Mon YYYY'), to_date('March 5, 2024', 'Month DD, YYYY');
SELECT to_timestamp('2024-03-05 14:30:15', 'YYYY-MM-DD HH24:MI:SS'), to_timestamp('05.03.24 2:30 PM', 'DD.MM.YY HH:MI AM'), to_timestamp('2024-03-05 14:30:15.25', 'YYYY-MM-DD HH24:MI:SS.MS'), to_timestamp('2024-03-05 14:30:15.123456', 'YYYY-MM-DD HH24:MI:SS.US');
SELECT to_date('2024 060', 'YYYY DDD'), to_date('2024-03', 'YYYY-MM'), to_date('  2024-3-5', 'YYYY-MM-DD'), to_date('2024-03-05T', 'YYYY-MM-DD"T"');
SET timezone = 'Europe/Paris';
SELECT to_timestamp('2024-07-01 12:00', 'YYYY-MM-DD HH24:MI');
RESET timezone;
SELECT to_date('2024-13-05', 'YYYY-MM-DD');
SELECT to_date('2024-02-30', 'YYYY-MM-DD');
SELECT to_date('2024-xx-05', 'YYYY-MM-DD');
SELECT to_date('2024', 'YYYY-MM-DD');
SELECT to_timestamp('13:00 PM', 'HH12:MI AM');
SELECT to_date('5 Foo 2024', 'DD Mon YYYY');
SELECT to_date(NULL, 'YYYY'), to_date('2024', NULL);
