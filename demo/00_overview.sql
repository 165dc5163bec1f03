-- What storagelab installed, and its settings.
\echo '-- \dx+ storagelab'
\dx+ storagelab
\echo '-- SELECT name, value, description FROM storagelab.setting_values;'
SELECT name, value, description FROM storagelab.setting_values ORDER BY name;
