-- to_char of dates and timestamps
SELECT to_char(timestamp '2024-03-05 14:07:09.123456', 'YYYY-MM-DD HH24:MI:SS.MS US') AS a,
       to_char(timestamp '2024-03-05 14:07:09', 'HH12:MI AM, Day DD Month YYYY') AS b,
       to_char(timestamp '2024-03-05 04:07:09', 'FMHH12:MI am, FMDay FMDDth FMMonth, Y,YYY') AS c;
SELECT to_char(date '2024-12-31', 'DDD D ID WW IW IYYY Q CC J W') AS d,
       to_char(date '2021-01-03', 'IYYY-IW-ID YYYY-WW') AS e,
       to_char(date '2024-07-04', 'Dy dy DY Mon mon MON RM rm') AS f;
SELECT to_char(timestamptz '2024-03-05 14:07:09+00', 'YYYY-MM-DD"T"HH24:MI:SSOF TZ tz') AS g,
       to_char(timestamp '2024-03-05 14:07:09', 'HH24:MI TZ|') AS h,
       to_char(date '0044-03-15', 'YYYY BC A.D. yyyy') AS i,
       to_char(date '2024-03-01', '"Quarter" Q", day" DDDth "of" YYYY \\D') AS j;
SELECT to_char(d, 'FMDDth') FROM (VALUES (date '2024-01-01'), (date '2024-01-02'), (date '2024-01-03'),
  (date '2024-01-04'), (date '2024-01-11'), (date '2024-01-12'), (date '2024-01-13'), (date '2024-01-21'),
  (date '2024-01-22'), (date '2024-01-23'), (date '2024-01-31')) v(d);
SELECT to_char(NULL::timestamp, 'YYYY'), to_char(now(), NULL), to_char(date '2024-01-01', '');
SELECT to_char(timestamp '2024-03-05 00:00:00', 'HH HH12 hh24 SSSS sssss ms MI"x"');
SELECT to_char(date '2024-01-02', 'YYYY\"MM\"DD');
-- to_char of numbers
SELECT '[' || to_char(v, f) || ']' AS r, v, f FROM (VALUES (123.45, '999.99'), (-123.45, '999.99'), (123.45, 'FM999.99'), (1234, '999'), (0.5, '0.99'), (0.5, '9.99'), (12, '0009'), (1234567.891, '9,999,999.99'), (-5, 'S999'), (5, 'S999'), (5, '999S'), (-5, '999MI'), (5, '999MI'), (-5, 'MI999'), (5, 'PL999'), (-5, 'SG999'), (-5, '999PR'), (123.4, 'FM999.99'), (123, 'FM999.99'), (123, 'FM999.00'), (0, '999'), (0, 'FM999'), (0, '9.99'), (-0.5, '9.99'), (1234.5, 'FM9G999D99'), (12345, '99,999'), (123, '99,999'), (-123, '99,999'), (1.5, '99'), (2.5, '99'), (-2.5, '99'), (100, 'FM9,999'), (3, '00.0'), (-12.345, 'FM990.0'), (99.99, '99.9'), (0.001, 'FM0.00'), (1234.5678, 'FM999999999.0000'),
 (5, '999PR'), (-5, 'PL999'), (5, '99'), (-123.456, '999D9'), (-0.001, '9.99'), (0.004, 'FM9.99'), (5, 'S9'), (-5, 'FMS999'), (-5, 'FM999MI'), (5, 'FM999MI'), (1234567, 'FM9,999'), (-1234.5, '9G999D9S'), (12, 'x99y'), (7, '9 9'), (123, '09999'), (-123, '09999'), (0.5, 'FM0.9'), (0.5, 'FM9.9'), (10, 'FM99.99'), (0, 'FM9.99'),(0, 'FM0.00'), (-0.0, '9.9'), (-1234.5, 'FM9G999D9S'), (1234.5, '9999.9PR'), (-1234.5, '9999.9PR'), (5, 'FMS999'), (5, 'FMPL999'), (-5, 'FMSG999'), (42, '"n="999'), (1234.5, '$9,999.00')) x(v, f);
SELECT to_char(42::int2, '9999'), to_char(-42, '9999'), to_char(9876543210::int8, '9,999,999,999'), to_char(2.5::float8, '99'), to_char(-1.25::float8, 'FM99.9'), to_char(1e10::float8, '99');
SELECT to_char(1.5, '9.9.9');
