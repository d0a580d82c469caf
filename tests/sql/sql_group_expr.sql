-- GROUP BY expressions, and columns that depend on a grouped primary key
CREATE TABLE author (id int PRIMARY KEY, name text, born date);
CREATE TABLE book (id int PRIMARY KEY, author int, title text, pages int, out timestamp);
INSERT INTO author VALUES (1, 'ann', '1970-03-01'), (2, 'bob', '1980-07-15'), (3, 'cid', '1990-12-31');
INSERT INTO book VALUES
  (1, 1, 'one', 120, '2020-01-05 10:00'), (2, 1, 'two', 300, '2020-01-05 18:00'),
  (3, 2, 'three', 90, '2020-02-11 09:00'), (4, 2, 'four', NULL, '2021-03-01 00:00'),
  (5, 1, 'five', 45, '2021-03-01 12:30');
-- an expression in the output and in GROUP BY
SELECT date_trunc('month', out) AS month, count(*), sum(pages)
FROM book GROUP BY date_trunc('month', out) ORDER BY 1;
-- grouped by an expression the output does not show
SELECT count(*) FROM book GROUP BY extract(year FROM out) ORDER BY 1;
-- the expression inside a larger one, in HAVING and in ORDER BY
SELECT extract(year FROM out) + 0 AS y, max(pages) FROM book
GROUP BY extract(year FROM out) HAVING extract(year FROM out) > 2019 ORDER BY extract(year FROM out) DESC;
SELECT pages / 100 AS hundreds, count(*) FROM book GROUP BY pages / 100 ORDER BY 1 NULLS FIRST;
SELECT lower(title) < 'm' AS early, string_agg(title, ',' ORDER BY title) FROM book GROUP BY lower(title) < 'm' ORDER BY 1;
-- columns of a table whose primary key is grouped
SELECT a.id, a.name, a.born, count(b.id) AS books, coalesce(sum(b.pages), 0) AS pages
FROM author a LEFT JOIN book b ON b.author = a.id GROUP BY a.id ORDER BY a.id;
SELECT a.name, count(*) FROM author a JOIN book b ON b.author = a.id GROUP BY a.id HAVING count(*) > 1 ORDER BY 1;
-- errors: a column that is neither grouped nor dependent
SELECT b.title, count(*) FROM author a JOIN book b ON b.author = a.id GROUP BY a.id;
SELECT out, count(*) FROM book GROUP BY date_trunc('day', out);
SELECT date_trunc('day', out) FROM book GROUP BY date_trunc('month', out);
DROP TABLE book;
DROP TABLE author;
