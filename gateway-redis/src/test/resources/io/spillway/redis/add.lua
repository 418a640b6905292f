-- A test script: adds ARGV[1] to KEYS[1] and answers the new value.
return redis.call('INCRBY', KEYS[1], ARGV[1])
