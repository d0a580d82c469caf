-- String functions, counting characters (UTF-8), as PostgreSQL's.
SELECT substr('hello', 2), substr('hello', 2, 3), substr('hello', 0, 3),
       substr('hello', -1, 3), substr('hello', 9), substr('héllo wörld', 2, 4);
SELECT substring('keel database' FROM 6), substring('keel database' FROM 1 FOR 4),
       substring('keel' FOR 2);
SELECT substr('abc', 1, -1);
SELECT strpos('hello', 'll'), strpos('hello', 'z'), strpos('héllo', 'l'),
       position('ö' IN 'wörld'), position('' IN 'x');
SELECT replace('a-b-c', '-', '+'), replace('aaa', 'aa', 'b'), replace('abc', '', 'x'),
       replace('hé hé', 'é', 'ée');
SELECT '[' || btrim('  x y  ') || ']', '[' || ltrim('  x ') || ']',
       '[' || rtrim('  x ') || ']', btrim('xxhixx', 'x'), ltrim('abcba', 'ab'),
       rtrim('héllé', 'é');
SELECT trim(both 'x' from 'xxyxx'), trim(leading from '  a  ') || '|',
       trim(trailing 'z' from 'zaz'), trim('  b  ') || '|';
SELECT left('hello', 2), left('hello', -2), left('hé', 9), right('hello', 2),
       right('hello', -2), right('héllo', 3);
SELECT repeat('ab', 3), repeat('x', 0), repeat('é', 2), reverse('héllo'),
       reverse('');
SELECT lpad('7', 3, '0'), lpad('hello', 3), rpad('a', 4, 'xy'), rpad('é', 3),
       lpad('x', 0), lpad('ab', 5, '');
SELECT starts_with('keel', 'ke'), starts_with('keel', 'el'),
       starts_with('', '');
SELECT concat('a', 1, NULL, 2.5, true), concat_ws('-', 'a', NULL, 'b', 3),
       concat_ws(NULL, 'a', 'b') IS NULL, concat(NULL) = '';
SELECT greatest(1, 5, 3), least(1, 5, 3), greatest(2, NULL), least(NULL, NULL::int),
       greatest('b', 'a', 'c'), least(1.5, 2), greatest(1, 2.5);
SELECT nullif(1, 1), nullif(1, 2), nullif('a', 'b'), nullif(NULL, 1),
       coalesce(nullif('', ''), 'empty');
SELECT substr(NULL, 1), replace('a', NULL, 'b'), left('abc', NULL);
SELECT upper(substr(lower('KEEL'), 1, 1)) || substr(lower('KEEL'), 2);
SELECT substr(1234, 2);
