-- demo/data/shop.sql: the demo's own data when ../shared/datasets/pagila is
-- missing (scripts/demo.sh loads it instead of Pagila).  A small DVD rental
-- shop generated here, with the table and column names the demo scripts
-- use: serial keys fed by sequences, a foreign-key web around film and
-- customer, a bytea staff.picture, text long enough to be TOASTed, and a
-- payment table partitioned by month.  About 16,000 rentals; loads in a
-- second or two.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;

CREATE TABLE language (
  language_id serial PRIMARY KEY,
  name        char(20) NOT NULL,
  last_update timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE category (
  category_id serial PRIMARY KEY,
  name        text NOT NULL,
  last_update timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE actor (
  actor_id    serial PRIMARY KEY,
  first_name  text NOT NULL,
  last_name   text NOT NULL,
  last_update timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX actor_last_name_idx ON actor (last_name);
CREATE TABLE film (
  film_id          serial PRIMARY KEY,
  title            text NOT NULL,
  description      text,
  release_year     int,
  language_id      int NOT NULL REFERENCES language,
  rental_duration  smallint NOT NULL DEFAULT 3,
  rental_rate      numeric(4,2) NOT NULL DEFAULT 4.99,
  length           smallint,
  rating           text DEFAULT 'G',
  last_update      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX film_title_idx ON film (title);
CREATE TABLE film_actor (
  actor_id    int NOT NULL REFERENCES actor ON UPDATE CASCADE,
  film_id     int NOT NULL REFERENCES film ON UPDATE CASCADE,
  last_update timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (actor_id, film_id)
);
CREATE TABLE film_category (
  film_id     int NOT NULL REFERENCES film ON UPDATE CASCADE,
  category_id int NOT NULL REFERENCES category ON UPDATE CASCADE,
  last_update timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (film_id, category_id)
);
CREATE TABLE store (
  store_id    serial PRIMARY KEY,
  address     text NOT NULL,
  last_update timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE staff (
  staff_id    serial PRIMARY KEY,
  first_name  text NOT NULL,
  last_name   text NOT NULL,
  store_id    int NOT NULL REFERENCES store,
  active      boolean NOT NULL DEFAULT true,
  username    text NOT NULL,
  picture     bytea,
  last_update timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE customer (
  customer_id serial PRIMARY KEY,
  store_id    int NOT NULL REFERENCES store,
  first_name  text NOT NULL,
  last_name   text NOT NULL,
  email       text,
  activebool  boolean NOT NULL DEFAULT true,
  create_date date NOT NULL DEFAULT current_date,
  active      int,
  last_update timestamptz DEFAULT now()
);
CREATE TABLE inventory (
  inventory_id serial PRIMARY KEY,
  film_id      int NOT NULL REFERENCES film ON UPDATE CASCADE,
  store_id     int NOT NULL REFERENCES store,
  last_update  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE rental (
  rental_id    serial PRIMARY KEY,
  rental_date  timestamptz NOT NULL,
  inventory_id int NOT NULL REFERENCES inventory ON UPDATE CASCADE,
  customer_id  int NOT NULL REFERENCES customer ON UPDATE CASCADE,
  return_date  timestamptz,
  staff_id     int NOT NULL REFERENCES staff,
  last_update  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX rental_natural_key ON rental (rental_date, inventory_id, customer_id);
CREATE TABLE payment (
  payment_id   serial,
  customer_id  int NOT NULL REFERENCES customer,
  staff_id     int NOT NULL REFERENCES staff,
  rental_id    int NOT NULL REFERENCES rental,
  amount       numeric(5,2) NOT NULL,
  payment_date timestamptz NOT NULL,
  PRIMARY KEY (payment_date, payment_id)
) PARTITION BY RANGE (payment_date);
CREATE TABLE payment_p2026_01 PARTITION OF payment
  FOR VALUES FROM ('2026-01-01 00:00+00') TO ('2026-02-01 00:00+00');
CREATE TABLE payment_p2026_02 PARTITION OF payment
  FOR VALUES FROM ('2026-02-01 00:00+00') TO ('2026-03-01 00:00+00');
CREATE TABLE payment_p2026_03 PARTITION OF payment
  FOR VALUES FROM ('2026-03-01 00:00+00') TO ('2026-04-01 00:00+00');

INSERT INTO language (name) VALUES ('English'), ('Italian'), ('Japanese'), ('Mandarin'), ('French'), ('German');
INSERT INTO category (name)
  SELECT unnest(ARRAY['Action', 'Animation', 'Children', 'Classics', 'Comedy', 'Documentary', 'Drama', 'Family',
                      'Foreign', 'Games', 'Horror', 'Music', 'New', 'Sci-Fi', 'Sports', 'Travel']);
INSERT INTO actor (first_name, last_name)
  SELECT 'Actor' || g, 'Surname' || (g % 120) FROM generate_series(1, 200) g;
-- Descriptions of 1 to 5 kB: the longer ones go to film's TOAST table.
INSERT INTO film (title, description, release_year, language_id, rental_duration, rental_rate, length, rating)
  SELECT 'Film ' || g,
         (SELECT string_agg(md5((g * 100 + i)::text), ' ') FROM generate_series(1, 30 + (g % 5) * 40) i),
         2000 + g % 26, 1 + g % 6, 3 + g % 5, (ARRAY[0.99, 2.99, 4.99])[1 + g % 3], 46 + g % 140,
         (ARRAY['G', 'PG', 'PG-13', 'R', 'NC-17'])[1 + g % 5]
    FROM generate_series(1, 1000) g;
INSERT INTO film_actor (actor_id, film_id)
  SELECT DISTINCT 1 + (f * 7 + k * 13) % 200, f FROM generate_series(1, 1000) f, generate_series(1, 5) k;
INSERT INTO film_category (film_id, category_id) SELECT f, 1 + f % 16 FROM generate_series(1, 1000) f;
INSERT INTO store (address) VALUES ('47 MySakila Drive'), ('28 MySQL Boulevard');
-- Staff pictures: PNG-signed bytes, incompressible after the signature.
INSERT INTO staff (first_name, last_name, store_id, username, picture)
  SELECT 'Staff' || g, 'Member' || g, 1 + g % 2, 'staff' || g,
         '\x89504e470d0a1a0a'::bytea ||
         (SELECT string_agg(decode(md5(random()::text), 'hex'), ''::bytea) FROM generate_series(1, 400))
    FROM generate_series(1, 2) g;
INSERT INTO customer (store_id, first_name, last_name, email, active)
  SELECT 1 + g % 2, 'Customer' || g, 'Name' || g, 'customer' || g || '@example.org', 1
    FROM generate_series(1, 600) g;
INSERT INTO inventory (film_id, store_id)
  SELECT 1 + g % 1000, 1 + g % 2 FROM generate_series(1, 4500) g;
INSERT INTO rental (rental_date, inventory_id, customer_id, return_date, staff_id)
  SELECT t, 1 + g % 4500, 1 + (g * 7) % 600, t + interval '3 days', 1 + g % 2
    FROM generate_series(1, 16000) g,
         LATERAL (SELECT timestamptz '2026-01-01 00:00+00' + (g * interval '7 minutes')) AS d(t);
INSERT INTO payment (customer_id, staff_id, rental_id, amount, payment_date)
  SELECT customer_id, staff_id, rental_id, 0.99 + (rental_id % 10), rental_date + interval '1 hour'
    FROM rental WHERE rental_date < '2026-04-01 00:00+00'::timestamptz - interval '1 hour';
RESET client_min_messages;
ANALYZE;
