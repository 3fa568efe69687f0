/**
 * Common single-token English words. Random prompts are drawn from them so that, on a real tokenizer,
 * one word is close to one token and `input_length` (words) stays close to the server's prompt_tokens.
 */
export const VOCABULARY: readonly string[] = (
  'the of and to in is was for on that with as by at from his her an it are be this which or had not but ' +
  'have were one all their they new more can has been other first who two after time year its into only over ' +
  'three may most also some would about when made out them where no then such between used these many well city ' +
  'people world part state during under both while through number each school war known since later year high ' +
  'life before long area several four national early name film work music house family team day own system south ' +
  'north west east river game water group main around found began line end played place old general second public ' +
  'small large water early great down back best power light level local form order point field market model data ' +
  'table value cache token queue batch server router request answer question reason result method report paper ' +
  'green blue red black white gold stone wood glass iron paper cloud rain snow wind fire earth ocean forest valley ' +
  'garden bridge tower castle harbor island mountain desert planet signal engine rocket travel letter story ' +
  'simple quick quiet bright clever gentle honest proud brave calm eager fancy jolly lucky noble rapid silent'
).split(' ')
