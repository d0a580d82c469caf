-- Command ids: a statement does not see the rows it changes itself, and
-- sees every change of the statements before it in its transaction.
CREATE TABLE cid_t (id int PRIMARY KEY, x int NOT NULL, note text);
INSERT INTO cid_t VALUES
  (1, 1, 'r1'), (2, 2, 'r2'), (3, 3, 'r3'), (4, 4, 'r4'), (5, 5, 'r5'), (6, 6, 'r6'), (7, 7, 'r7'), (8, 8, 'r8'), (9, 9, 'r9'), (10, 10, 'r10'),
  (11, 11, 'r11'), (12, 12, 'r12'), (13, 13, 'r13'), (14, 14, 'r14'), (15, 15, 'r15'), (16, 16, 'r16'), (17, 17, 'r17'), (18, 18, 'r18'), (19, 19, 'r19'), (20, 20, 'r20'),
  (21, 21, 'r21'), (22, 22, 'r22'), (23, 23, 'r23'), (24, 24, 'r24'), (25, 25, 'r25'), (26, 26, 'r26'), (27, 27, 'r27'), (28, 28, 'r28'), (29, 29, 'r29'), (30, 30, 'r30'),
  (31, 31, 'r31'), (32, 32, 'r32'), (33, 33, 'r33'), (34, 34, 'r34'), (35, 35, 'r35'), (36, 36, 'r36'), (37, 37, 'r37'), (38, 38, 'r38'), (39, 39, 'r39'), (40, 40, 'r40'),
  (41, 41, 'r41'), (42, 42, 'r42'), (43, 43, 'r43'), (44, 44, 'r44'), (45, 45, 'r45'), (46, 46, 'r46'), (47, 47, 'r47'), (48, 48, 'r48'), (49, 49, 'r49'), (50, 50, 'r50'),
  (51, 51, 'r51'), (52, 52, 'r52'), (53, 53, 'r53'), (54, 54, 'r54'), (55, 55, 'r55'), (56, 56, 'r56'), (57, 57, 'r57'), (58, 58, 'r58'), (59, 59, 'r59'), (60, 60, 'r60'),
  (61, 61, 'r61'), (62, 62, 'r62'), (63, 63, 'r63'), (64, 64, 'r64'), (65, 65, 'r65'), (66, 66, 'r66'), (67, 67, 'r67'), (68, 68, 'r68'), (69, 69, 'r69'), (70, 70, 'r70'),
  (71, 71, 'r71'), (72, 72, 'r72'), (73, 73, 'r73'), (74, 74, 'r74'), (75, 75, 'r75'), (76, 76, 'r76'), (77, 77, 'r77'), (78, 78, 'r78'), (79, 79, 'r79'), (80, 80, 'r80'),
  (81, 81, 'r81'), (82, 82, 'r82'), (83, 83, 'r83'), (84, 84, 'r84'), (85, 85, 'r85'), (86, 86, 'r86'), (87, 87, 'r87'), (88, 88, 'r88'), (89, 89, 'r89'), (90, 90, 'r90'),
  (91, 91, 'r91'), (92, 92, 'r92'), (93, 93, 'r93'), (94, 94, 'r94'), (95, 95, 'r95'), (96, 96, 'r96'), (97, 97, 'r97'), (98, 98, 'r98'), (99, 99, 'r99'), (100, 100, 'r100'),
  (101, 101, 'r101'), (102, 102, 'r102'), (103, 103, 'r103'), (104, 104, 'r104'), (105, 105, 'r105'), (106, 106, 'r106'), (107, 107, 'r107'), (108, 108, 'r108'), (109, 109, 'r109'), (110, 110, 'r110'),
  (111, 111, 'r111'), (112, 112, 'r112'), (113, 113, 'r113'), (114, 114, 'r114'), (115, 115, 'r115'), (116, 116, 'r116'), (117, 117, 'r117'), (118, 118, 'r118'), (119, 119, 'r119'), (120, 120, 'r120'),
  (121, 121, 'r121'), (122, 122, 'r122'), (123, 123, 'r123'), (124, 124, 'r124'), (125, 125, 'r125'), (126, 126, 'r126'), (127, 127, 'r127'), (128, 128, 'r128'), (129, 129, 'r129'), (130, 130, 'r130'),
  (131, 131, 'r131'), (132, 132, 'r132'), (133, 133, 'r133'), (134, 134, 'r134'), (135, 135, 'r135'), (136, 136, 'r136'), (137, 137, 'r137'), (138, 138, 'r138'), (139, 139, 'r139'), (140, 140, 'r140'),
  (141, 141, 'r141'), (142, 142, 'r142'), (143, 143, 'r143'), (144, 144, 'r144'), (145, 145, 'r145'), (146, 146, 'r146'), (147, 147, 'r147'), (148, 148, 'r148'), (149, 149, 'r149'), (150, 150, 'r150'),
  (151, 151, 'r151'), (152, 152, 'r152'), (153, 153, 'r153'), (154, 154, 'r154'), (155, 155, 'r155'), (156, 156, 'r156'), (157, 157, 'r157'), (158, 158, 'r158'), (159, 159, 'r159'), (160, 160, 'r160'),
  (161, 161, 'r161'), (162, 162, 'r162'), (163, 163, 'r163'), (164, 164, 'r164'), (165, 165, 'r165'), (166, 166, 'r166'), (167, 167, 'r167'), (168, 168, 'r168'), (169, 169, 'r169'), (170, 170, 'r170'),
  (171, 171, 'r171'), (172, 172, 'r172'), (173, 173, 'r173'), (174, 174, 'r174'), (175, 175, 'r175'), (176, 176, 'r176'), (177, 177, 'r177'), (178, 178, 'r178'), (179, 179, 'r179'), (180, 180, 'r180'),
  (181, 181, 'r181'), (182, 182, 'r182'), (183, 183, 'r183'), (184, 184, 'r184'), (185, 185, 'r185'), (186, 186, 'r186'), (187, 187, 'r187'), (188, 188, 'r188'), (189, 189, 'r189'), (190, 190, 'r190'),
  (191, 191, 'r191'), (192, 192, 'r192'), (193, 193, 'r193'), (194, 194, 'r194'), (195, 195, 'r195'), (196, 196, 'r196'), (197, 197, 'r197'), (198, 198, 'r198'), (199, 199, 'r199'), (200, 200, 'r200');
-- Every row once, though its new version lands ahead of the scan.
UPDATE cid_t SET x = x + 1 WHERE x > 0;
SELECT count(*), sum(x), min(x), max(x) FROM cid_t;
-- Keys moved forward along the primary key the scan reads.
UPDATE cid_t SET id = id + 1000 WHERE id > 0;
SELECT count(*), min(id), max(id), sum(id) FROM cid_t;
UPDATE cid_t SET id = id - 1000, note = note || '+' WHERE id >= 1001 AND id <= 1200;
SELECT count(*), min(id), max(id) FROM cid_t WHERE note LIKE '%+';
-- A key that is taken fails the statement, as each row is changed.
UPDATE cid_t SET id = id + 1 WHERE id > 0;
SELECT count(*), sum(id) FROM cid_t;
-- INSERT ... SELECT from the table it fills reads the rows it had.
INSERT INTO cid_t SELECT id + 1000, x, note FROM cid_t WHERE id <= 50;
SELECT count(*), min(id), max(id) FROM cid_t;
UPDATE cid_t SET x = x + 1 WHERE id > 1045 RETURNING id, x;
DELETE FROM cid_t WHERE id > 1047 RETURNING id, x;
DELETE FROM cid_t WHERE id > 1000;
SELECT count(*), max(id) FROM cid_t;
-- Within a transaction each statement sees the ones before it.
BEGIN;
DELETE FROM cid_t WHERE id > 100;
SELECT count(*) FROM cid_t;
INSERT INTO cid_t VALUES (150, 0, 'back');
UPDATE cid_t SET x = x * 2 WHERE id >= 100;
SELECT id, x, note FROM cid_t WHERE id >= 99 ORDER BY id;
DELETE FROM cid_t WHERE id = 150;
INSERT INTO cid_t VALUES (150, 7, 'again');
UPDATE cid_t SET x = x + 1 WHERE id = 150;
SELECT id, x, note FROM cid_t WHERE id >= 100 ORDER BY id;
DELETE FROM cid_t WHERE x > 100;
SELECT count(*), sum(x) FROM cid_t;
ROLLBACK;
SELECT count(*), sum(x) FROM cid_t;
DROP TABLE cid_t;
-- A table without a primary key: each row the scan returns is changed as
-- it was returned, two identical rows both, none twice.
CREATE TABLE nopk (a int, b text);
INSERT INTO nopk VALUES (1, 'one'), (2, 'two'), (2, 'two'), (3, 'three'), (NULL, 'none');
UPDATE nopk SET b = 'x' WHERE a > 1 RETURNING *;
SELECT * FROM nopk ORDER BY a, b;
UPDATE nopk SET a = a + 10 WHERE b = 'x' RETURNING a, b;
UPDATE nopk SET a = 0 WHERE a IS NULL;
DELETE FROM nopk WHERE b = 'x' RETURNING *;
SELECT * FROM nopk ORDER BY a;
DELETE FROM nopk;
INSERT INTO nopk VALUES (1, 'r');
INSERT INTO nopk SELECT a + 1, b FROM nopk;
INSERT INTO nopk SELECT a + 2, b FROM nopk;
INSERT INTO nopk SELECT a + 4, b FROM nopk;
INSERT INTO nopk SELECT a + 8, b FROM nopk;
INSERT INTO nopk SELECT a + 16, b FROM nopk;
INSERT INTO nopk SELECT a + 32, b FROM nopk;
INSERT INTO nopk SELECT a + 64, b FROM nopk;
INSERT INTO nopk SELECT a + 128, b FROM nopk;
INSERT INTO nopk SELECT a + 256, b FROM nopk;
SELECT count(*), sum(a), min(a), max(a) FROM nopk;
-- Every row once, though its new version lands ahead of the scan.
UPDATE nopk SET a = a + 1000, b = b || '+';
SELECT count(*), sum(a), min(a), max(a), min(b), max(b) FROM nopk;
BEGIN;
DELETE FROM nopk WHERE a % 2 = 0;
UPDATE nopk SET b = 'odd';
SELECT count(*), sum(a), min(b), max(b) FROM nopk;
ROLLBACK;
SELECT count(*), sum(a) FROM nopk;
-- A unique index: a key taken fails the statement.
CREATE UNIQUE INDEX nopk_a ON nopk (a);
UPDATE nopk SET a = 1002 WHERE a = 1001;
UPDATE nopk SET a = a - 1000, b = 'u' WHERE a = 1500 RETURNING a, b;
DELETE FROM nopk WHERE a > 1505 RETURNING a;
SELECT count(*), sum(a), min(a), max(a) FROM nopk;
SELECT * FROM nopk WHERE a < 1003 ORDER BY a;
DELETE FROM nopk;
SELECT count(*) FROM nopk;
DROP TABLE nopk;
