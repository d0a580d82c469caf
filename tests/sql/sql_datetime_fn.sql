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
