-- When the replica that stored a node's status received the newest answer in it (ack or nack).
-- An agent that reconnects may answer two replicas in turn, and the first one's write may be
-- stored last (its database writes failed for a while): the answer times decide which answer is
-- newer, so that the late write cannot overwrite the newer status. Existing rows start from
-- their last ack.
ALTER TABLE data_node ADD COLUMN last_answer_at timestamptz;
UPDATE data_node SET last_answer_at = last_ack_at;
