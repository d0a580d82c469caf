-- Intervals: input, output, arithmetic with dates and timestamps.
SELECT interval '1 day', interval '2 hours 30 minutes', interval '1 year 2 mons',
       interval '3 days 04:05:06.789', interval '-1 day +02:00', interval '00:00',
       '2 weeks'::interval, '1.5 hours'::interval, '2 hours ago'::interval,
       interval '1 mon -1 day', interval '36 hours', interval '0.5 months';
SELECT interval '1 decade', interval '1 century 2 years', interval '90 sec',
       interval '1 day' = interval '24 hours', interval '1 mon' = interval '30 days',
       interval '1 day' < interval '25 hours', interval '-1 day' < interval '0';
SELECT timestamp '2026-01-31 10:00' + interval '1 month',
       timestamp '2024-02-29' + interval '1 year',
       timestamp '2026-03-31' - interval '1 mon',
       timestamptz '2026-12-07 10:00+00' - interval '90 minutes',
       date '2026-12-07' + interval '36 hours',
       interval '1 day' + timestamp '2026-12-31',
       date '2026-12-07' + 30, 30 + date '2026-12-07', date '2026-12-07' - 400,
       date '2026-12-07' - date '2025-12-07';
SELECT timestamp '2026-12-07 10:00' - timestamp '2026-12-05 08:30',
       timestamp '2026-12-05 08:30' - timestamp '2026-12-07 10:00',
       timestamptz '2026-12-07 00:00+00' - timestamptz '2026-01-01 00:00+00';
SELECT interval '1 day' + interval '2 hours', interval '1 mon' - interval '1 day',
       interval '1 day' * 3, 2 * interval '1 hour', interval '1 day' * 1.5,
       interval '3 hours' / 2, interval '1 mon' / 3, -interval '1 year 1 day';
SELECT extract(epoch FROM interval '1 day 01:00'), extract(hour FROM interval '26 hours'),
       extract(day FROM interval '3 days 4 hours'), extract(month FROM interval '14 months'),
       extract(year FROM interval '14 months'), date_part('minute', interval '90 minutes'),
       extract(second FROM interval '1.25 seconds');
CREATE TABLE iv_t (id int PRIMARY KEY, at timestamp);
INSERT INTO iv_t VALUES (1, '2026-12-01 00:00'), (2, '2026-12-05 12:00'), (3, '2026-11-01');
SELECT id FROM iv_t WHERE at > timestamp '2026-12-07' - interval '7 days' ORDER BY id;
SELECT id, timestamp '2026-12-07' - at AS age FROM iv_t ORDER BY age;
SELECT max(timestamp '2026-12-07' - at) FROM iv_t;
SELECT interval 'fortnight';
SELECT interval '1 day 2';
SELECT date '2026-01-01' + timestamp '2026-01-01';
DROP TABLE iv_t;
SELECT date '300000-01-01' + interval '1 day';
