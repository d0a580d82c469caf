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
