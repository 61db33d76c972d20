-- Raises SQLSTATE p_code with p_message unless p_ok: lets one statement of
-- data-modifying CTEs roll itself back when one of them found what it must
-- not (a start whose idempotency key another run holds: start-execution.ts),
-- where a transaction would have taken BEGIN, a statement to look and COMMIT.
CREATE FUNCTION "nf_refuse_unless"(p_ok BOOLEAN, p_code TEXT, p_message TEXT) RETURNS BOOLEAN
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF NOT p_ok THEN
    RAISE EXCEPTION USING ERRCODE = p_code, MESSAGE = p_message;
  END IF;
  RETURN TRUE;
END;
$$;
