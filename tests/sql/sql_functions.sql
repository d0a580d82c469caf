-- more scalar functions: maths, strings, dates
SELECT sqrt(16), sqrt(2), cbrt(27), exp(1), ln(10), log(1000), log10(0.001::float8), power(2, 10), pow(2.5::float8, 2), pi();
SELECT sign(-3), sign(0), sign(4.5), sign(-0.25::numeric), mod(17, 5), mod(-17, 5), mod(17::int8, -5), mod(17.5, 5), div(17, 5), div(-17.9, 5);
SELECT md5('abc'), md5(''), initcap('hello wORLD, foo-bar baz9x'), translate('12345', '143', 'ax'), translate('héllo', 'é', 'e');
SELECT ascii('A'), ascii('é'), ascii(''), chr(66), chr(233), chr(8364), octet_length('héllo'), bit_length('ab'), to_hex(255), to_hex(-1), to_hex(9223372036854775807);
SELECT regexp_replace('a1b22c333', '[0-9]+', '#'), regexp_replace('a1b22c333', '[0-9]+', '#', 'g'),
       regexp_replace('Hello World', '(\w+) (\w+)', '\2 \1'), regexp_replace('aAbB', 'a', 'x', 'gi'),
       regexp_replace('abc', 'x*', '-', 'g'), regexp_replace('foo', 'o', '[\&]', 'g');
SELECT to_timestamp(0), to_timestamp(1700000000), to_timestamp(1700000000.5), make_date(2024, 2, 29), make_date(-44, 3, 15);
SELECT age(timestamp '2024-03-01', timestamp '2024-01-31'), age(timestamp '2024-01-31', timestamp '2024-03-01'),
       age(timestamp '2024-03-15 10:00', timestamp '2020-06-20 12:30:15.5'), age(date '2024-02-29', date '2023-02-28'),
       age(timestamptz '2024-01-01 00:00+00', timestamptz '2023-12-31 23:59:59+00');
SELECT sqrt(NULL), md5(NULL), mod(NULL, 2), age(NULL::timestamp, timestamp '2024-01-01');
-- errors
SELECT sqrt(-1);
SELECT ln(0);
SELECT mod(1, 0);
SELECT div(1, 0);
SELECT power(0, -1);
SELECT chr(0);
SELECT make_date(2023, 2, 29);
SELECT md5(1);
-- operators that are functions
SELECT 2 ^ 10, 2.5::float8 ^ 2, |/ 16, ||/ 27, @ -5, @ -2.5, 2 ^ -1, 2 ^ 3 ^ 2;
SELECT (-8) ^ (1.0::float8 / 3);
-- pg_typeof()
SELECT pg_typeof(1), pg_typeof(1::bigint), pg_typeof(1.5), pg_typeof('a'),
  pg_typeof('a'::text), pg_typeof(NULL), pg_typeof(NULL::int);
SELECT pg_typeof(now()), pg_typeof(current_date), pg_typeof(true),
  pg_typeof(1::smallint), pg_typeof(1e0), pg_typeof('x'::varchar(3)),
  pg_typeof('x'::char(2)), pg_typeof(interval '1 day');
SELECT pg_typeof(count(*)), pg_typeof(sum(1)), pg_typeof(avg(1));
SELECT pg_typeof(x) FROM (VALUES (1), (2)) v(x);
